/* fuzz_suite: `ocbench run --suite FILE.json` — a suite file through ocb_suite_def_load
 * (collect/suite_def.h): the JSON reader with its line-numbered syntax errors, the
 * bench/params/grid/cases checks against every registered bench's declared parameters. */
#include <stdint.h>
#include <unistd.h>

#include "../../collect/suite_def.h"
#include "fuzz_util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ocb_suite_def d;
	char path[32];
	int fd = fuzz_memfile(data, size, path);

	if (fd < 0)
		return 0;
	if (fuzz_note("suite", ocb_suite_def_load(path, &d)) == 0)
		ocb_suite_def_release(&d);
	close(fd);
	return 0;
}
