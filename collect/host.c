/* host: probes /proc, /sys, uname, the compiler, OpenBLAS and PAPI into struct
 * ocb_machine, and hashes the identity fields into the fingerprint. */
#include "host.h"

#include <cblas.h>
#include <ctype.h>
#include <math.h>
#include <papi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "../common/ocb_cpu.h"

/* ISA flags (as /proc/cpuinfo spells them) that change which kernels can run or how fast.
 * Listed in this order in m->isa when present. */
static const char *const isa_flags[] = {
	"sse2", "ssse3", "sse4_1", "sse4_2", "popcnt", "avx", "f16c", "fma", "bmi2",
	"avx2", "avx_vnni", "avx512f", "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16",
	"avx512_fp16", "amx_tile", "amx_int8", "amx_bf16", "sha_ni", "hypervisor",
};

static void copy_str(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

/* Trims white space at both ends in place; returns s. */
static char *trim(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	size_t n = strlen(s);
	while (n && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	return s;
}

/* Reads the first line of `path` into buf (trimmed). 0 on success, -1 otherwise. */
static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	int rc = -1;
	if (!f)
		return -1;
	if (fgets(buf, (int)len, f)) {
		char *t = trim(buf);
		memmove(buf, t, strlen(t) + 1);
		rc = 0;
	}
	fclose(f);
	return rc;
}

/* "48K", "2048K", "32M" -> bytes; 0 if unparsable. */
static int64_t parse_size(const char *s)
{
	char *end = NULL;
	long long v = strtoll(s, &end, 10);
	if (!end || end == s || v < 0)
		return 0;
	switch (toupper((unsigned char)*end)) {
	case 'K': return (int64_t)v << 10;
	case 'M': return (int64_t)v << 20;
	case 'G': return (int64_t)v << 30;
	default: return (int64_t)v;
	}
}

/* Does the space-separated `flags` line contain the word `w`? */
static int has_word(const char *flags, const char *w)
{
	size_t n = strlen(w);
	for (const char *p = flags; (p = strstr(p, w)) != NULL; p += n)
		if ((p == flags || p[-1] == ' ' || p[-1] == '\t') &&
		    (p[n] == '\0' || p[n] == ' ' || p[n] == '\n' || p[n] == '\t'))
			return 1;
	return 0;
}

/* CPU model and ISA flags from the first processor block of /proc/cpuinfo. */
static void probe_cpuinfo(struct ocb_machine *m)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL, *flags = NULL;
	size_t cap = 0;
	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		char *colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		char *key = trim(line), *val = trim(colon + 1);
		if (!m->cpu_model[0] && strcmp(key, "model name") == 0)
			copy_str(m->cpu_model, sizeof m->cpu_model, val);
		else if (!flags && strcmp(key, "flags") == 0)
			flags = strdup(val);
		if (m->cpu_model[0] && flags)
			break;
	}
	if (flags) {
		size_t len = 0;
		for (size_t i = 0; i < sizeof isa_flags / sizeof isa_flags[0]; i++) {
			if (strcmp(isa_flags[i], "hypervisor") == 0) {
				m->is_vm = has_word(flags, "hypervisor");
				continue;
			}
			if (has_word(flags, isa_flags[i]) && len + strlen(isa_flags[i]) + 2 < sizeof m->isa)
				len += (size_t)sprintf(m->isa + len, "%s%s", len ? " " : "",
						       isa_flags[i]);
		}
	}
	free(flags);
	free(line);
	fclose(f);
}

/* Physical cores: distinct (package, core) pairs among the online CPUs. */
static int count_cores(int ncpu)
{
	long seen[1024];
	int nseen = 0;
	for (int c = 0; c < ncpu && c < 4096; c++) {
		char path[128], buf[64];
		long pkg = 0, core = -1;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/core_id", c);
		if (read_line(path, buf, sizeof buf) != 0)
			continue;
		core = atol(buf);
		snprintf(path, sizeof path,
			 "/sys/devices/system/cpu/cpu%d/topology/physical_package_id", c);
		if (read_line(path, buf, sizeof buf) == 0)
			pkg = atol(buf);
		long key = pkg * 100000 + core;
		int dup = 0;
		for (int i = 0; i < nseen; i++)
			dup |= seen[i] == key;
		if (!dup && nseen < 1024)
			seen[nseen++] = key;
	}
	return nseen;
}

/* Cache sizes of cpu0 from /sys/devices/system/cpu/cpu0/cache/index* (level, type, size).
 * The L3 size is that of one instance as the OS reports it (shared by its CPUs). */
static void probe_caches(struct ocb_machine *m)
{
	for (int i = 0; i < 16; i++) {
		char path[128], level[16], type[32], size[32];
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (read_line(path, level, sizeof level) != 0)
			break;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		if (read_line(path, type, sizeof type) != 0)
			continue;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (read_line(path, size, sizeof size) != 0)
			continue;
		int64_t bytes = parse_size(size);
		int lv = atoi(level);
		if (strcmp(type, "Instruction") == 0)
			continue;
		if (lv == 1)
			m->l1d_bytes = bytes;
		else if (lv == 2)
			m->l2_bytes = bytes;
		else if (lv == 3)
			m->l3_bytes = bytes;
	}
	/* Some VMs have no cache folders in sysfs at all (the AMD EPYC Zen 5 VM): then the
	 * sizes the CPU itself reports through CPUID, as glibc's sysconf reads them (0 or -1
	 * when it does not know). Without them the bands assumed a 256 KiB L2 on a 1 MiB one
	 * and put an L2-resident working set in the L3 band. */
	const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE), l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
	const long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
	if (m->l1d_bytes <= 0 && l1 > 0)
		m->l1d_bytes = l1;
	if (m->l2_bytes <= 0 && l2 > 0)
		m->l2_bytes = l2;
	if (m->l3_bytes <= 0 && l3 > 0)
		m->l3_bytes = l3;
}

static void probe_mem(struct ocb_machine *m)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	if (!f)
		return;
	while (fgets(line, sizeof line, f)) {
		long long kb;
		if (sscanf(line, "MemTotal: %lld kB", &kb) == 1) {
			m->mem_bytes = (int64_t)kb * 1024;
			break;
		}
	}
	fclose(f);
}

/* "Debian GNU/Linux 12 (bookworm); Linux 6.1.0 x86_64" */
static void probe_os(struct ocb_machine *m)
{
	struct utsname u;
	char pretty[160] = "";
	FILE *f = fopen("/etc/os-release", "r");
	if (f) {
		char line[256];
		while (fgets(line, sizeof line, f)) {
			if (strncmp(line, "PRETTY_NAME=", 12) == 0) {
				char *v = trim(line + 12);
				size_t n = strlen(v);
				if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
					v[n - 1] = '\0';
					v++;
				}
				copy_str(pretty, sizeof pretty, v);
				break;
			}
		}
		fclose(f);
	}
	if (uname(&u) == 0)
		snprintf(m->os, sizeof m->os, "%.100s%s%.32s %.64s %.32s", pretty, pretty[0] ? "; " : "",
			 u.sysname, u.release, u.machine);
	else
		copy_str(m->os, sizeof m->os, pretty);
}

#ifndef OCB_CFLAGS
#define OCB_CFLAGS ""
#endif

static void probe_compiler(struct ocb_machine *m)
{
#if defined(__clang__)
	const char *name = "clang";
#elif defined(__GNUC__)
	const char *name = "gcc";
#else
	const char *name = "cc";
#endif
#ifdef __VERSION__
	const char *ver = __VERSION__;
#else
	const char *ver = "?";
#endif
	snprintf(m->compiler, sizeof m->compiler, "%s %s %s", name, ver, OCB_CFLAGS);
	char *t = trim(m->compiler);
	memmove(m->compiler, t, strlen(t) + 1);
}

/* OpenBLAS's build configuration and the kernel core it picked at load time (a
 * DYNAMIC_ARCH build may not know a new CPU and fall back to an old core). */
static void probe_blas(struct ocb_machine *m)
{
	const char *cfg = openblas_get_config();
	const char *core = openblas_get_corename();
	snprintf(m->blas, sizeof m->blas, "%s; core %s", cfg ? cfg : "OpenBLAS",
		 core ? core : "?");
	char *t = trim(m->blas);
	memmove(m->blas, t, strlen(t) + 1);
}

/* The PAPI the build compiled against; PAPI is not initialised here (collect/counters
 * does that and knows whether counters actually work). */
static void probe_papi(struct ocb_machine *m)
{
	snprintf(m->papi_version, sizeof m->papi_version, "%d.%d.%d.%d",
		 PAPI_VERSION_MAJOR(PAPI_VERSION), PAPI_VERSION_MINOR(PAPI_VERSION),
		 PAPI_VERSION_REVISION(PAPI_VERSION), PAPI_VERSION_INCREMENT(PAPI_VERSION));
}

void ocb_host_probe(struct ocb_machine *m)
{
	memset(m, 0, sizeof *m);
	if (gethostname(m->hostname, sizeof m->hostname - 1) != 0)
		m->hostname[0] = '\0';
	probe_cpuinfo(m);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	m->threads = n > 0 ? (int)n : 1;
	m->cores = count_cores(m->threads);
	if (m->cores <= 0)
		m->cores = m->threads;
	probe_caches(m);
	probe_mem(m);
	probe_os(m);
	probe_compiler(m);
	probe_blas(m);
	probe_papi(m);
	ocb_host_fingerprint(m);
}

/* 64-bit FNV-1a (Fowler, Noll, Vo; http://www.isthe.com/chongo/tech/comp/fnv/):
 * h = 14695981039346656037; for each byte: h ^= byte; h *= 1099511628211. */
#define FNV64_OFFSET 14695981039346656037ULL
#define FNV64_PRIME 1099511628211ULL

static uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= FNV64_PRIME;
	}
	return h;
}

/* Hashes "name=value" followed by a 0x1f separator, so that field boundaries are part
 * of the hash ("ab"+"c" differs from "a"+"bc"). */
static uint64_t field(uint64_t h, const char *name, const char *value)
{
	static const char sep = 0x1f;
	h = fnv1a(h, name, strlen(name));
	h = fnv1a(h, "=", 1);
	h = fnv1a(h, value, strlen(value));
	return fnv1a(h, &sep, 1);
}

static uint64_t field_i(uint64_t h, const char *name, long long v)
{
	char buf[32];
	snprintf(buf, sizeof buf, "%lld", v);
	return field(h, name, buf);
}

void ocb_host_fingerprint(struct ocb_machine *m)
{
	/* Identity: hardware, OS, compiler and libraries. Not the hostname (clones of one
	 * VM image are one machine kind) and not free memory; total memory is rounded to
	 * whole GiB because MemTotal moves by a few MiB between kernels and boots. */
	const int64_t gib = (int64_t)1 << 30;
	uint64_t h = FNV64_OFFSET;
	h = field(h, "cpu_model", m->cpu_model);
	h = field(h, "isa", m->isa);
	h = field_i(h, "cores", m->cores);
	h = field_i(h, "threads", m->threads);
	h = field_i(h, "l1d", m->l1d_bytes);
	h = field_i(h, "l2", m->l2_bytes);
	h = field_i(h, "l3", m->l3_bytes);
	h = field_i(h, "mem_gib", (m->mem_bytes + gib / 2) / gib);
	h = field(h, "os", m->os);
	h = field(h, "compiler", m->compiler);
	h = field(h, "blas", m->blas);
	h = field(h, "papi", m->papi_version);
	h = field_i(h, "is_vm", m->is_vm);
	snprintf(m->fingerprint, sizeof m->fingerprint, "%016llx", (unsigned long long)h);
}

static int in_list(const char *core, const char *const *list, size_t n)
{
	for (size_t i = 0; core && i < n; i++)
		if (strcasecmp(core, list[i]) == 0)
			return 1;
	return 0;
}

const char *ocb_host_blas_core_for(const char *core, int avx2fma, int avx512)
{
	/* OpenBLAS cores by vector ISA (names as openblas_get_corename() gives them) */
	static const char *const wide[] = {"skylakex", "cooperlake", "sapphirerapids"};
	static const char *const avx2[] = {"haswell", "zen", "excavator"};
	const size_t nw = sizeof wide / sizeof wide[0], na = sizeof avx2 / sizeof avx2[0];
	if (!core || !avx2fma || in_list(core, wide, nw))
		return NULL;
	if (avx512)
		return "SkylakeX";
	return in_list(core, avx2, na) ? NULL : "Haswell";
}

/* AVX-512 as OpenBLAS's SkylakeX kernels need it: F, CD, BW, DQ, VL (every AVX-512 CPU
 * since Skylake-SP has the five) with zmm state saved by the OS. */
static int cpu_skylakex(void)
{
	__builtin_cpu_init();
	return ocb_cpu_avx512f() && __builtin_cpu_supports("avx512cd") &&
	       __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
	       __builtin_cpu_supports("avx512vl");
}

const char *ocb_host_blas_core_wanted(void)
{
	__builtin_cpu_init();
	int avx2fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	return ocb_host_blas_core_for(openblas_get_corename(), avx2fma, cpu_skylakex());
}

int ocb_host_blas_fallback(void)
{
	return ocb_host_blas_core_wanted() != NULL;
}

void ocb_host_blas_reexec(char **argv)
{
	const char *set = getenv("OPENBLAS_CORETYPE"), *want = ocb_host_blas_core_wanted();
	if ((set && *set) || !want)
		return;
	if (setenv("OPENBLAS_CORETYPE", want, 1) != 0)
		return;
	/* OMP_WAIT_POLICY is left to the user: "passive" helped BSR/librsb at load ~50, but on
	 * the quiet 2-vCPU Xeon it made every short OpenMP region pay a futex wake-up
	 * (quant_gemv q4_0 1024x1024, 2 threads: 0.018 ms passive vs 0.007 ms default, slower
	 * than 1 thread's 0.012 ms; flagged cases in `run --suite baseline,quant --quick
	 * --filter 'sgemv|quant_gemv'`: 10 vs 3). */
	execv("/proc/self/exe", argv);
	/* exec failed: carry on with the fallback core; the blas field says which. */
}

void ocb_host_load_mhz(double load[3], double *mhz)
{
	char line[512];
	double sum = 0;
	int n = 0;
	load[0] = load[1] = load[2] = *mhz = NAN;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3)
			load[0] = load[1] = load[2] = NAN;
		fclose(f);
	}
	if (!(f = fopen("/proc/cpuinfo", "r")))
		return;
	while (fgets(line, sizeof line, f)) {
		const char *colon = strchr(line, ':');
		if (colon && !strncmp(line, "cpu MHz", 7)) {
			sum += strtod(colon + 1, NULL);
			n++;
		}
	}
	fclose(f);
	if (n)
		*mhz = sum / n;
}
