/*-------------------------------------------------------------------------
 * calibrate.h
 *		Helpers shared by gpuext_calibrate() and the workload calibration:
 *		timing queries and storing parameters through SPI.
 *
 * IDENTIFICATION
 *		src/calibrate.h
 *-------------------------------------------------------------------------
 */
#ifndef GPUEXT_CALIBRATE_H
#define GPUEXT_CALIBRATE_H

extern char *gx_extension_schema(void);
extern char *gx_calibration_start(void);
extern void gx_set_local(const char *name, const char *value);
extern void gx_spi_exec(const char *sql, int expected);
extern double gx_time_query(const char *sql, int n);
extern double gx_planned_cost(const char *sql);
extern void gx_store_parameter(const char *schema, const char *name, double value,
							   const char *unit);

#endif							/* GPUEXT_CALIBRATE_H */
