-- Extension lifecycle: create, inspect, drop, create again
CREATE EXTENSION gpuext;
SELECT gpuext_version();
SELECT extversion FROM pg_extension WHERE extname = 'gpuext';
-- every function declares volatility, strictness and parallel safety
SELECT p.proname, p.provolatile, p.proisstrict, p.proparallel
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'gpuext')
 ORDER BY 1;
DROP EXTENSION gpuext;
SELECT count(*) FROM pg_proc WHERE proname LIKE 'gpuext%';
CREATE EXTENSION gpuext;
SELECT service_state IN ('ready', 'no gpu') AS service_up FROM gpuext_status();
