/* host: the machine probe and its fingerprint. */
#include <criterion/criterion.h>
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "../collect/host.h"

static int is_hex16(const char *s)
{
	if (strlen(s) != 16)
		return 0;
	for (; *s; s++)
		if (!isxdigit((unsigned char)*s))
			return 0;
	return 1;
}

Test(host, probe_fills_the_fields)
{
	struct ocb_machine m;
	ocb_host_probe(&m);
	cr_assert(is_hex16(m.fingerprint), "fingerprint '%s'", m.fingerprint);
	cr_assert_gt(m.threads, 0);
	cr_assert_gt(m.cores, 0);
	cr_assert_leq(m.cores, m.threads);
	cr_assert_gt(m.mem_bytes, (int64_t)1 << 26);
	cr_assert_neq(m.os[0], '\0');
	cr_assert(strstr(m.compiler, __VERSION__) != NULL, "compiler '%s'", m.compiler);
	cr_assert(strstr(m.blas, "OpenBLAS") != NULL, "blas '%s'", m.blas);
	int a, b, c, d;
	cr_assert_eq(sscanf(m.papi_version, "%d.%d.%d.%d", &a, &b, &c, &d), 4, "papi '%s'",
		     m.papi_version);
	cr_assert(m.is_vm == 0 || m.is_vm == 1);
	/* The ISA list has only words from our list, no "hypervisor" (that is is_vm). */
	cr_assert(strstr(m.isa, "hypervisor") == NULL);
	if (__builtin_cpu_supports("avx2"))
		cr_assert(strstr(m.isa, "avx2") != NULL, "isa '%s'", m.isa);
}

Test(host, fingerprint_is_stable_across_probes)
{
	struct ocb_machine a, b;
	ocb_host_probe(&a);
	ocb_host_probe(&b);
	cr_assert_str_eq(a.fingerprint, b.fingerprint);
	char before[65];
	strcpy(before, a.fingerprint);
	ocb_host_fingerprint(&a);
	cr_assert_str_eq(a.fingerprint, before);
}

Test(host, fingerprint_changes_with_hardware_fields)
{
	struct ocb_machine m, x;
	ocb_host_probe(&m);

	x = m;
	x.l2_bytes += 1 << 20;
	ocb_host_fingerprint(&x);
	cr_assert_str_neq(x.fingerprint, m.fingerprint, "l2 change");

	x = m;
	x.cpu_model[0] = x.cpu_model[0] == 'X' ? 'Y' : 'X'; /* another model */
	ocb_host_fingerprint(&x);
	cr_assert_str_neq(x.fingerprint, m.fingerprint, "cpu_model change");

	x = m;
	x.cores = m.cores + 1;
	ocb_host_fingerprint(&x);
	cr_assert_str_neq(x.fingerprint, m.fingerprint, "cores change");

	x = m;
	x.mem_bytes = m.mem_bytes + ((int64_t)4 << 30);
	ocb_host_fingerprint(&x);
	cr_assert_str_neq(x.fingerprint, m.fingerprint, "4 GiB more memory");

	x = m;
	snprintf(x.blas, sizeof x.blas, "OpenBLAS 9.9; core Other");
	ocb_host_fingerprint(&x);
	cr_assert_str_neq(x.fingerprint, m.fingerprint, "blas change");
}

Test(host, fingerprint_excludes_hostname_and_small_memory_drift)
{
	struct ocb_machine m, x;
	ocb_host_probe(&m);
	x = m;
	snprintf(x.hostname, sizeof x.hostname, "%.200s-clone", m.hostname);
	ocb_host_fingerprint(&x);
	cr_assert_str_eq(x.fingerprint, m.fingerprint, "hostname must not matter");

	/* MemTotal moving by a few MiB (kernel reservations) keeps the identity, as long as
	 * it stays in the same whole GiB. */
	x = m;
	int64_t gib = (int64_t)1 << 30;
	int64_t r = (m.mem_bytes + gib / 2) / gib * gib; /* the rounded value */
	m.mem_bytes = r;
	ocb_host_fingerprint(&m);
	x.mem_bytes = r + (8 << 20);
	ocb_host_fingerprint(&x);
	cr_assert_str_eq(x.fingerprint, m.fingerprint, "8 MiB drift must not matter");
}

Test(host, field_boundaries_are_hashed)
{
	struct ocb_machine a, b;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	strcpy(a.cpu_model, "ab");
	strcpy(a.isa, "c");
	strcpy(b.cpu_model, "a");
	strcpy(b.isa, "bc");
	ocb_host_fingerprint(&a);
	ocb_host_fingerprint(&b);
	cr_assert_str_neq(a.fingerprint, b.fingerprint);
}

/* The OpenBLAS core ocbench re-executes with: the widest vectors the CPU offers, never
 * narrower than what OpenBLAS picked itself, nothing when the CPU has no AVX2. */
Test(host, blas_core_follows_the_widest_isa)
{
	/* Xeon with AVX-512 (today's machine): OpenBLAS 0.3.21 picks SkylakeX, kept */
	cr_assert_null(ocb_host_blas_core_for("SkylakeX", 1, 1));
	cr_assert_null(ocb_host_blas_core_for("Cooperlake", 1, 1));
	/* an AVX-512 Xeon OpenBLAS does not know: Prescott (SSE3) -> SkylakeX, not Haswell */
	cr_assert_str_eq(ocb_host_blas_core_for("Prescott", 1, 1), "SkylakeX");
	cr_assert_str_eq(ocb_host_blas_core_for("Haswell", 1, 1), "SkylakeX");
	/* AMD Zen 3 (AVX2, no AVX-512): OpenBLAS picks Zen, kept */
	cr_assert_null(ocb_host_blas_core_for("Zen", 1, 0));
	cr_assert_null(ocb_host_blas_core_for("Haswell", 1, 0));
	/* an AVX2 CPU on an SSE/AVX core -> Haswell */
	cr_assert_str_eq(ocb_host_blas_core_for("Prescott", 1, 0), "Haswell");
	cr_assert_str_eq(ocb_host_blas_core_for("Sandybridge", 1, 0), "Haswell");
	/* no AVX2: nothing better to force */
	cr_assert_null(ocb_host_blas_core_for("Prescott", 0, 0));
	cr_assert_null(ocb_host_blas_core_for(NULL, 1, 1));
	/* this process: what it asks for is what the fallback flag says */
	cr_assert_eq(ocb_host_blas_fallback(), ocb_host_blas_core_wanted() != NULL);
}
