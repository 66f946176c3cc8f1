-- GUCs: every gpuext.* setting, its default, valid and invalid values,
-- units, contexts (postmaster, sighup, superuser) and the reserved prefix
\set VERBOSITY terse

-- the full list, as defined by the library (boot values, not the server's
-- configuration file, so the output is the same on every machine)
SELECT name, vartype, context, unit, boot_val, min_val, max_val, enumvals
  FROM pg_settings WHERE name LIKE 'gpuext.%' ORDER BY name COLLATE "C";

-- defaults of the settings the test cluster does not configure
SHOW gpuext.enabled;
SHOW gpuext.enable_gpuscan;
SHOW gpuext.enable_gpujoin;
SHOW gpuext.enable_gpuagg;
SHOW gpuext.cpu_fallback;
SHOW gpuext.gpu_memory_limit;
SHOW gpuext.regression_test_mode;
SHOW gpuext.force_offload;
SHOW gpuext.max_batch_pages;
SHOW gpuext.service_poll_interval;
SHOW gpuext.debug_inject_fault;
SHOW gpuext.cost_unit_us;
SHOW gpuext.gpu_setup_us;
SHOW gpuext.gpu_batch_us;
SHOW gpuext.host_page_us;
SHOW gpuext.host_tuple_us;
SHOW gpuext.link_read_gbps;
SHOW gpuext.device_row_ns;
SHOW gpuext.cpu_engine_row_ns;
-- gpuext.device and gpuext.dma_buffer_size come from the test cluster's
-- postgresql.conf
SELECT current_setting('gpuext.device') IN ('auto', 'cpu', 'gpu') AS device_is_set;
SELECT current_setting('gpuext.dma_buffer_size') IS NOT NULL AS dma_buffer_size_is_set;

-- booleans
SET gpuext.enabled = off;
SHOW gpuext.enabled;
SET gpuext.enabled = 'yes';
SHOW gpuext.enabled;
SET gpuext.enabled = 0;
SHOW gpuext.enabled;
SET gpuext.enabled = 'maybe';
SET gpuext.enabled = 2;
RESET gpuext.enabled;
SHOW gpuext.enabled;
SET gpuext.enable_gpuscan = false;
SHOW gpuext.enable_gpuscan;
SET gpuext.enable_gpuscan = 'sometimes';
SET gpuext.enable_gpujoin = off;
SHOW gpuext.enable_gpujoin;
SET gpuext.enable_gpujoin = 'nope';
SET gpuext.enable_gpuagg = off;
SHOW gpuext.enable_gpuagg;
SET gpuext.enable_gpuagg = '';
SET gpuext.regression_test_mode = on;
SHOW gpuext.regression_test_mode;
SET gpuext.regression_test_mode = 'on please';
SET gpuext.force_offload = on;
SHOW gpuext.force_offload;
SET gpuext.force_offload = 'x';
RESET ALL;
SHOW gpuext.enable_gpuscan;
SHOW gpuext.force_offload;

-- enums
SET gpuext.device = gpu;
SHOW gpuext.device;
SET gpuext.device = cpu;
SHOW gpuext.device;
SET gpuext.device = auto;
SHOW gpuext.device;
SET gpuext.device = 'GPU';
SHOW gpuext.device;
SET gpuext.device = 'tpu';
SET gpuext.device = '';
SET gpuext.cpu_fallback = notice;
SHOW gpuext.cpu_fallback;
SET gpuext.cpu_fallback = off;
SHOW gpuext.cpu_fallback;
SET gpuext.cpu_fallback = on;
SHOW gpuext.cpu_fallback;
-- hidden spellings
SET gpuext.cpu_fallback = 'false';
SHOW gpuext.cpu_fallback;
SET gpuext.cpu_fallback = 'true';
SHOW gpuext.cpu_fallback;
SET gpuext.cpu_fallback = 'warning';
SET gpuext.debug_inject_fault = alloc;
SHOW gpuext.debug_inject_fault;
SET gpuext.debug_inject_fault = kernel;
SHOW gpuext.debug_inject_fault;
SET gpuext.debug_inject_fault = service_die;
SHOW gpuext.debug_inject_fault;
SET gpuext.debug_inject_fault = transfer_stall;
SHOW gpuext.debug_inject_fault;
SET gpuext.debug_inject_fault = none;
SHOW gpuext.debug_inject_fault;
SET gpuext.debug_inject_fault = 'segfault';
RESET gpuext.device;
SELECT current_setting('gpuext.device') IN ('auto', 'cpu', 'gpu') AS device_is_reset;

-- integers with units: gpuext.gpu_memory_limit is in MB
SET gpuext.gpu_memory_limit = '1GB';
SHOW gpuext.gpu_memory_limit;
SET gpuext.gpu_memory_limit = 512;
SHOW gpuext.gpu_memory_limit;
SET gpuext.gpu_memory_limit = '2048kB';
SHOW gpuext.gpu_memory_limit;
SET gpuext.gpu_memory_limit = '80GB';
SHOW gpuext.gpu_memory_limit;
SELECT setting, unit FROM pg_settings WHERE name = 'gpuext.gpu_memory_limit';
SET gpuext.gpu_memory_limit = 0;
SHOW gpuext.gpu_memory_limit;
-- -1: a share of the GPU's memory (the default); below that, nothing
SET gpuext.gpu_memory_limit = -1;
SHOW gpuext.gpu_memory_limit;
SET gpuext.gpu_memory_limit = -2;
SET gpuext.gpu_memory_limit = '1 parsec';
SET gpuext.gpu_memory_limit = '1ms';
-- beyond the integer range
SET gpuext.gpu_memory_limit = '3000TB';
SET gpuext.gpu_memory_limit = 'lots';
RESET gpuext.gpu_memory_limit;
SHOW gpuext.gpu_memory_limit;

-- gpuext.max_batch_pages: 1 .. 65536, no unit
SET gpuext.max_batch_pages = 1;
SHOW gpuext.max_batch_pages;
SET gpuext.max_batch_pages = 65536;
SHOW gpuext.max_batch_pages;
SET gpuext.max_batch_pages = 0;
SET gpuext.max_batch_pages = 65537;
SET gpuext.max_batch_pages = -5;
-- fractions are rounded, as for every integer setting
SET gpuext.max_batch_pages = '1.5';
SHOW gpuext.max_batch_pages;
SET gpuext.max_batch_pages = '8kB';
SET gpuext.max_batch_pages = 'many';
RESET gpuext.max_batch_pages;
SHOW gpuext.max_batch_pages;

-- the cost model's real-valued parameters
SET gpuext.cost_unit_us = 2.5;
SHOW gpuext.cost_unit_us;
SET gpuext.cost_unit_us = 0;
SET gpuext.cost_unit_us = 0.0001;
SET gpuext.cost_unit_us = 1e7;
SET gpuext.gpu_setup_us = 0;
SHOW gpuext.gpu_setup_us;
SET gpuext.gpu_setup_us = 1e9;
SHOW gpuext.gpu_setup_us;
SET gpuext.gpu_setup_us = -1;
SET gpuext.gpu_setup_us = 2e9;
SET gpuext.gpu_batch_us = 12.5;
SHOW gpuext.gpu_batch_us;
SET gpuext.gpu_batch_us = -0.5;
SET gpuext.host_page_us = 1;
SHOW gpuext.host_page_us;
SET gpuext.host_page_us = 1e6;
SET gpuext.host_page_us = 1.5e6;
SET gpuext.host_tuple_us = 0.01;
SHOW gpuext.host_tuple_us;
SET gpuext.host_tuple_us = -1;
SET gpuext.link_read_gbps = 50;
SHOW gpuext.link_read_gbps;
SET gpuext.link_read_gbps = 0.001;
SHOW gpuext.link_read_gbps;
SET gpuext.link_read_gbps = 0;
SET gpuext.link_read_gbps = 2e6;
SET gpuext.device_row_ns = 0.5;
SHOW gpuext.device_row_ns;
SET gpuext.device_row_ns = -0.05;
SET gpuext.cpu_engine_row_ns = 8;
SHOW gpuext.cpu_engine_row_ns;
SET gpuext.cpu_engine_row_ns = 1e7;
SET gpuext.cpu_engine_row_ns = 'fast';
SET gpuext.device_row_ns = '1 ns';
SET gpuext.link_read_gbps = 'NaN';
RESET ALL;
SHOW gpuext.cost_unit_us;
SHOW gpuext.link_read_gbps;

-- SET LOCAL lasts until the end of the transaction
BEGIN;
SET LOCAL gpuext.max_batch_pages = 16;
SHOW gpuext.max_batch_pages;
COMMIT;
SHOW gpuext.max_batch_pages;
BEGIN;
SET gpuext.enable_gpujoin = off;
ROLLBACK;
SHOW gpuext.enable_gpujoin;

-- gpuext.dma_buffer_size is fixed at server start
SET gpuext.dma_buffer_size = '64MB';
SET gpuext.dma_buffer_size = 1;
SELECT context FROM pg_settings WHERE name = 'gpuext.dma_buffer_size';
-- gpuext.service_poll_interval only changes through the configuration file
SET gpuext.service_poll_interval = 50;
SET gpuext.service_poll_interval = '1s';
SHOW gpuext.service_poll_interval;

-- the gpuext prefix is reserved: no placeholder variables under it
\set VERBOSITY default
SET gpuext.no_such_thing = 1;
\set VERBOSITY terse
SET gpuext.enable = on;
SHOW gpuext.no_such_thing;
SELECT current_setting('gpuext.no_such_thing', true) IS NULL AS missing_ok;
-- other prefixes still take placeholders
SET gpuext_other.thing = 1;
SHOW gpuext_other.thing;
RESET gpuext_other.thing;

-- superuser-only settings
CREATE ROLE regress_gpuext_guc_user;
SET ROLE regress_gpuext_guc_user;
SET gpuext.gpu_memory_limit = '1GB';
SET gpuext.debug_inject_fault = service_die;
SHOW gpuext.gpu_memory_limit;
SHOW gpuext.debug_inject_fault;
-- the user-settable ones are fine
SET gpuext.device = cpu;
SHOW gpuext.device;
SET gpuext.cpu_fallback = off;
SHOW gpuext.cpu_fallback;
SET gpuext.max_batch_pages = 128;
SHOW gpuext.max_batch_pages;
SET gpuext.enabled = off;
SHOW gpuext.enabled;
SET gpuext.gpu_setup_us = 100;
SHOW gpuext.gpu_setup_us;
RESET ROLE;
RESET ALL;
-- a superuser may set them
SET gpuext.gpu_memory_limit = '1GB';
SHOW gpuext.gpu_memory_limit;
RESET gpuext.gpu_memory_limit;
DROP ROLE regress_gpuext_guc_user;
