-- set: virginian
-- Seed 001 (Bakkum & Chakradhar, "Virginian"): the ten filter queries of the
-- paper's test suite (bakks/virginian src/test/queries.h) over the 8 M-row
-- table of uniform and normal int4/float4 columns (x scale).  Odd queries use
-- the int4 columns, even ones the same plan on float4.  Each query returns its
-- full result to the client (up to 75 % of the rows), as in the paper; the
-- vNNc twins count the rows instead, which shows the scan without the cost of
-- materialising and sending millions of rows.
-- tables: virginian

-- name: v01
select id, uniformi, normali5 from virginian where uniformi > 60 and normali5 < 0
-- name: v02
select id, uniformf, normalf5 from virginian where uniformf > 60.0 and normalf5 < 0.0
-- name: v03
select id, uniformi, normali5 from virginian where uniformi > -60 and normali5 < 5
-- name: v04
select id, uniformf, normalf5 from virginian where uniformf > -60.0 and normalf5 < 5.0
-- name: v05
select id, uniformi, normali20 from virginian where (normali20 + 40) > (uniformi - 10)
-- name: v06
select id, uniformf, normalf20 from virginian where (normalf20 + 40.0) > (uniformf - 10.0)
-- name: v07
select id, normali5, normali20 from virginian where normali5 * normali20 >= -5 and normali5 * normali20 <= 5
-- name: v08
select id, normalf5, normalf20 from virginian where normalf5 * normalf20 >= -5.0 and normalf5 * normalf20 <= 5.0
-- name: v09
select id, uniformi, normali5, normali20 from virginian
 where uniformi >= -1 and uniformi <= 1 or normali5 >= -1 and normali5 <= 1 or normali20 >= -1 and normali20 <= 1
-- name: v10
select id, uniformf, normalf5, normalf20 from virginian
 where uniformf >= -1.0 and uniformf <= 1.0 or normalf5 >= -1.0 and normalf5 <= 1.0 or normalf20 >= -1.0 and normalf20 <= 1.0
-- name: v01c
select count(*) from virginian where uniformi > 60 and normali5 < 0
-- name: v02c
select count(*) from virginian where uniformf > 60.0 and normalf5 < 0.0
-- name: v03c
select count(*) from virginian where uniformi > -60 and normali5 < 5
-- name: v04c
select count(*) from virginian where uniformf > -60.0 and normalf5 < 5.0
-- name: v05c
select count(*) from virginian where (normali20 + 40) > (uniformi - 10)
-- name: v06c
select count(*) from virginian where (normalf20 + 40.0) > (uniformf - 10.0)
-- name: v07c
select count(*) from virginian where normali5 * normali20 >= -5 and normali5 * normali20 <= 5
-- name: v08c
select count(*) from virginian where normalf5 * normalf20 >= -5.0 and normalf5 * normalf20 <= 5.0
-- name: v09c
select count(*) from virginian
 where uniformi >= -1 and uniformi <= 1 or normali5 >= -1 and normali5 <= 1 or normali20 >= -1 and normali20 <= 1
-- name: v10c
select count(*) from virginian
 where uniformf >= -1.0 and uniformf <= 1.0 or normalf5 >= -1.0 and normalf5 <= 1.0 or normalf20 >= -1.0 and normalf20 <= 1.0
