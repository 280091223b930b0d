/* replay_main: the fuzz targets without libFuzzer, for `make check`: each argument (a
 * file, or a folder of files) is fed once to LLVMFuzzerTestOneInput. The seed corpora
 * and every input that once crashed (tests/fuzz/regress/<target>/) replay this way on
 * each check, under the ordinary build (and ASan+UBSan in `make sanitize`). Prints
 * "<n> inputs" and exits 0 when every input returned; a crash is the test failing. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long len;

	if (!f) {
		perror(path);
		return -1;
	}
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	rewind(f);
	buf = malloc(len > 0 ? (size_t)len : 1);
	if (!buf || (len > 0 && fread(buf, 1, (size_t)len, f) != (size_t)len)) {
		fprintf(stderr, "%s: cannot read\n", path);
		fclose(f);
		free(buf);
		return -1;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)len);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	long n = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0)
			continue; /* an absent regress folder: nothing crashed yet */
		if (!S_ISDIR(st.st_mode)) {
			if (replay_file(argv[i]))
				return 1;
			n++;
			continue;
		}
		struct dirent **ents = NULL;
		int ne = scandir(argv[i], &ents, NULL, alphasort);
		for (int k = 0; k < ne; k++) {
			char p[4096];
			snprintf(p, sizeof p, "%s/%s", argv[i], ents[k]->d_name);
			if (ents[k]->d_name[0] != '.' && stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				if (replay_file(p))
					return 1;
				n++;
			}
			free(ents[k]);
		}
		free(ents);
	}
	printf("%s: %ld inputs replayed\n", argv[0], n);
	return 0;
}
