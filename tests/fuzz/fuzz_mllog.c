/* fuzz_mllog: an MLLOG file through the MLPerf rule checker ocb_mllog_check_stream
 * (collect/mllog_rules.h), the one place ocbench parses `:::MLLOG {json}` lines. */
#include <stdint.h>
#include <stdio.h>

#include "../../collect/mllog_rules.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_mllog_verdict v;
	FILE *f;

	if (size == 0)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	ocb_mllog_check_stream(f, &v);
	fclose(f);
	return 0;
}
