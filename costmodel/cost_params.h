/*-------------------------------------------------------------------------
 * cost_params.h
 *		The cost model's real-valued parameters, one entry each: its name
 *		(the field of GxCostParams and the setting gpuext.<name>), its
 *		default, its bounds and its description.
 *
 * A list, not a header: whoever includes it defines GX_COST_PARAM(name,
 * default, min, max, description) first (cost.h makes the fields of
 * GxCostParams of it, params.c the table the gpuext.* settings are
 * defined from).  Units are in the names: _us microseconds, _ns
 * nanoseconds, _gbps GB/s; index_cost_scale and parallel_page_share are
 * ratios.
 *
 * IDENTIFICATION
 *		costmodel/cost_params.h
 *-------------------------------------------------------------------------
 */

/* there is deliberately not an #ifndef COST_PARAMS_H here */

GX_COST_PARAM(cost_unit_us, 5.0, 0.001, 1e6,
			  "Microseconds of one planner cost unit on this machine.")
GX_COST_PARAM(gpu_setup_us, 300.0, 0, 1e9,
			  "Microseconds a GPU operator adds to a query beyond its per-batch, per-page and per-row work (planning, starting, round trips, ending).")
GX_COST_PARAM(gpu_batch_us, 30.0, 0, 1e9,
			  "Microseconds of fixed overhead per batch sent to the GPU.")
GX_COST_PARAM(host_page_us, 0.6, 0, 1e6,
			  "Microseconds of host work per heap page of a GPU scan (pin, lock, visibility).")
GX_COST_PARAM(host_visibility_us, 2.0, 0, 1e6,
			  "Extra microseconds of host work per heap page that is not all-visible (a visibility check per tuple).")
GX_COST_PARAM(host_tuple_us, 0.15, 0, 1e6,
			  "Microseconds of host work per row a GPU operator returns.")
GX_COST_PARAM(host_row_page_us, 0.0, 0, 1e6,
			  "Microseconds of host work per heap page holding any row a GPU operator returns (reading the page back).")
GX_COST_PARAM(client_row_us, 0.0, 0, 1e6,
			  "Microseconds a serial plan spends sending one result row to the client (0: not charged).")
GX_COST_PARAM(link_read_gbps, 45.0, 0.001, 1e6,
			  "Rate in GB/s at which kernels read host memory (zero-copy over the link).")
GX_COST_PARAM(device_row_ns, 0.05, 0, 1e6,
			  "Nanoseconds of device work per row and device-program instruction.")
GX_COST_PARAM(device_atomic_ns, 0.2, 0, 1e6,
			  "Nanoseconds of device work per aggregated row (group lookup and atomic updates).")
GX_COST_PARAM(link_write_gbps, 40.0, 0.001, 1e6,
			  "Rate in GB/s of copies from the device to host memory.")
GX_COST_PARAM(host_group_us, 1.0, 0, 1e6,
			  "Microseconds of host work to finish one group of a GPU aggregation.")
GX_COST_PARAM(kernel_launch_us, 5.0, 0, 1e6,
			  "Microseconds to launch a kernel and see it complete.")
GX_COST_PARAM(link_latency_us, 10.0, 0, 1e6,
			  "Microseconds of a small pinned copy to the device.")
GX_COST_PARAM(link_copy_gbps, 50.0, 0.001, 1e6,
			  "Rate in GB/s of pinned copies from host to device memory.")
GX_COST_PARAM(device_read_gbps, 3000.0, 0.001, 1e7,
			  "Rate in GB/s of coalesced kernel reads of device memory.")
GX_COST_PARAM(device_gather_ns, 0.05, 0, 1e6,
			  "Nanoseconds of one random read of device memory, amortised over the device.")
GX_COST_PARAM(storage_seq_read_us, 20.0, 0, 1e7,
			  "Microseconds to read a page sequentially from storage.")
GX_COST_PARAM(storage_random_read_us, 100.0, 0, 1e7,
			  "Microseconds to read a page at random from storage.")
GX_COST_PARAM(storage_seq_write_us, 40.0, 0, 1e7,
			  "Microseconds to write a page sequentially to storage (durably).")
GX_COST_PARAM(storage_random_write_us, 400.0, 0, 1e7,
			  "Microseconds to write a page at random to storage (durably).")
GX_COST_PARAM(cpu_engine_row_ns, 4.0, 0, 1e6,
			  "Nanoseconds of CPU engine work per row and device-program instruction.")
GX_COST_PARAM(cpu_engine_setup_us, 0.0, 0, 1e9,
			  "Microseconds an operator on the CPU engine adds to a query beyond its per-page and per-row work (planning, starting, ending).")
GX_COST_PARAM(cpu_engine_agg_setup_us, 0.0, 0, 1e9,
			  "Microseconds a GpuAgg on the CPU engine adds to a query beyond its scan and its per-row and per-group work.")
GX_COST_PARAM(gpuagg_setup_us, 300.0, 0, 1e9,
			  "Microseconds a GpuAgg on the GPU adds to a query beyond its scan and its per-row and per-group work.")
GX_COST_PARAM(index_cost_scale, 1.0, 0.01, 100,
			  "Factor on seq_page_cost and random_page_cost when gpuext re-costs PostgreSQL's index and bitmap scans.")
GX_COST_PARAM(parallel_page_share, 0.0, 0, 1,
			  "Share of a parallel sequential scan's page cost that its workers divide among themselves when gpuext re-costs PostgreSQL's partial sequential scans.")
GX_COST_PARAM(parallel_worker_us, 0.0, 0, 1e7,
			  "Microseconds between the starts of a parallel query's workers: each more worker it launches ends it this much later at the least.")
GX_COST_PARAM(parallel_start_us, 0.0, 0, 1e7,
			  "Microseconds from a parallel query's start until its first worker runs, beyond parallel_worker_us (the worker's start and, at the end, its exit, which the leader waits for).")
GX_COST_PARAM(stock_group_us, 0.0, 0, 1e6,
			  "Microseconds a group of PostgreSQL's hashed aggregation takes beyond its estimate (its table outgrowing the CPU's caches); gpuext charges stock hashed aggregations this per group.")
GX_COST_PARAM(stock_agg_row_us, 0.0, 0, 1e6,
			  "Microseconds a row of PostgreSQL's hashed aggregation takes beyond its estimate (hashing its keys, finding its group); gpuext charges stock groupings, hashed or sorted, this per input row.")
GX_COST_PARAM(stock_byref_us, 0.0, 0, 1e6,
			  "Microseconds an aggregate's step over a by-reference value (numeric, text) or a by-reference group key takes in PostgreSQL's aggregation beyond its estimate; gpuext charges stock aggregations this per input row and such aggregate or key.")
GX_COST_PARAM(stock_join_row_us, 0.0, 0, 1e6,
			  "Microseconds an outer row of PostgreSQL's hash join takes beyond its estimate (hashing it, probing the table, forming the joined row); gpuext charges this per outer row to a stock hash join whose rows an aggregation takes.")
GX_COST_PARAM(stock_deform_us, 0.0, 0, 1e6,
			  "Microseconds PostgreSQL's sequential scan takes a row to step over one column past the row's first variable-width one on its way to a column its filter reads; gpuext charges stock sequential scans this per row read and such column, less what the rows they return would take anyway.")
