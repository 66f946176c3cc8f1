/*-------------------------------------------------------------------------
 * layout_check.c
 *		Compile-time checks that the page layout constants of
 *		cuda/gx_common.h (which cannot include PostgreSQL's headers) match
 *		PostgreSQL's own definitions.
 *
 * IDENTIFICATION
 *		src/layout_check.c
 *-------------------------------------------------------------------------
 */
#include "gpuext.h"

#include "access/htup_details.h"
#include "storage/bufpage.h"
#include "storage/itemid.h"

StaticAssertDecl(GX_BLCKSZ == BLCKSZ, "block size");
StaticAssertDecl(GX_PAGE_HEADER_SIZE == SizeOfPageHeaderData, "page header size");
StaticAssertDecl(GX_PD_LOWER_OFFSET == offsetof(PageHeaderData, pd_lower), "pd_lower");
StaticAssertDecl(GX_MAX_TUPLES_PER_PAGE == MaxHeapTuplesPerPage, "tuples per page");
StaticAssertDecl(GX_BITMAP_WORDS * 32 >= MaxHeapTuplesPerPage, "bitmap words");
StaticAssertDecl(sizeof(ItemIdData) == 4, "line pointer size");
StaticAssertDecl(GX_LP_NORMAL == LP_NORMAL, "LP_NORMAL");
StaticAssertDecl(GX_T_INFOMASK2_OFFSET == offsetof(HeapTupleHeaderData, t_infomask2), "t_infomask2");
StaticAssertDecl(GX_T_INFOMASK_OFFSET == offsetof(HeapTupleHeaderData, t_infomask), "t_infomask");
StaticAssertDecl(GX_T_HOFF_OFFSET == offsetof(HeapTupleHeaderData, t_hoff), "t_hoff");
StaticAssertDecl(GX_T_BITS_OFFSET == offsetof(HeapTupleHeaderData, t_bits), "t_bits");
StaticAssertDecl(GX_HEAP_HASNULL == HEAP_HASNULL, "HEAP_HASNULL");
StaticAssertDecl(GX_HEAP_HASVARWIDTH == HEAP_HASVARWIDTH, "HEAP_HASVARWIDTH");
StaticAssertDecl(GX_HEAP_HASEXTERNAL == HEAP_HASEXTERNAL, "HEAP_HASEXTERNAL");
StaticAssertDecl(GX_HEAP_NATTS_MASK == HEAP_NATTS_MASK, "HEAP_NATTS_MASK");

/*
 * The line pointer bit layout (lp_off:15, lp_flags:2, lp_len:15) is a
 * bit-field in C; check it at run time once, from the service's start.
 */
void
gx_check_itemid_layout(void)
{
	ItemIdData	lp;
	uint32		word;

	memset(&lp, 0, sizeof(lp));
	lp.lp_off = 1234;
	lp.lp_flags = LP_NORMAL;
	lp.lp_len = 567;
	memcpy(&word, &lp, sizeof(word));
	if (GX_LP_OFF(word) != 1234 || GX_LP_FLAGS(word) != LP_NORMAL || GX_LP_LEN(word) != 567)
		elog(ERROR, "gpuext: unexpected line pointer layout");
}
