/* Tests of common/workload_id: the quant_acc identity's name, JSON and old-format reader. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "../common/ocb_error.h"
#include "../common/workload_id.h"

static const struct ocb_quant_id q8aware = {"mlp", "q8_0", "fp16-aware", "8", "32"};

Test(workload_id, name_and_label)
{
	char buf[128];
	cr_assert_eq(ocb_quant_id_name(&q8aware, buf, sizeof buf), OCB_OK);
	cr_expect_str_eq(buf, "quant_acc:mlp:q8_0/fp16-aware:8:32");
	struct ocb_quant_id fp = {"lm", "fp32", "", "32", "-"};
	cr_assert_eq(ocb_quant_id_name(&fp, buf, sizeof buf), OCB_OK);
	cr_expect_str_eq(buf, "quant_acc:lm:fp32:32:-");
	ocb_quant_id_label(&q8aware, buf, sizeof buf);
	cr_expect_str_eq(buf, "q8_0/fp16-aware");
	cr_expect_eq(ocb_quant_id_name(&q8aware, buf, 10), OCB_EINVAL);
}

Test(workload_id, json_roundtrip)
{
	struct ocb_quant_id back;
	char *j = ocb_quant_id_to_json(&q8aware);
	cr_assert_not_null(j);
	cr_expect_not_null(strstr(j, "\"kind\":\"quant_acc\""), "%s", j);
	cr_assert_eq(ocb_quant_id_from_json(j, &back), OCB_OK, "%s", ocb_lasterr());
	cr_expect_eq(memcmp(&back, &q8aware, sizeof back), 0);
	free(j);
	cr_expect_eq(ocb_quant_id_from_json("{\"kind\":\"train\"}", &back), OCB_EFORMAT);
	cr_expect_eq(ocb_quant_id_from_json("not json", &back), OCB_EFORMAT);
	cr_expect_eq(ocb_quant_id_from_json("{\"kind\":\"quant_acc\",\"bits\":\"123456789\"}",
					    &back), OCB_EFORMAT);
}

/* Databases written before schema v4 hold only the name. */
Test(workload_id, old_format_reader)
{
	struct ocb_quant_id id;
	cr_assert_eq(ocb_quant_id_parse_name("quant_acc:mlp:q8_0/fp16-aware:8:32", &id), OCB_OK);
	cr_expect_eq(memcmp(&id, &q8aware, sizeof id), 0);
	cr_assert_eq(ocb_quant_id_parse_name("quant_acc:lm:ternary:1.58:row", &id), OCB_OK);
	cr_expect_str_eq(id.method, "ternary");
	cr_expect_str_eq(id.rounding, "");
	cr_expect_str_eq(id.bits, "1.58");
	cr_expect_str_eq(id.group, "row");
	cr_assert_eq(ocb_quant_id_parse_name("quant_acc:mlp:rtn", &id), OCB_OK);
	cr_expect_str_eq(id.method, "rtn");
	cr_expect_str_eq(id.bits, "");
	cr_expect_str_eq(id.group, "");
	cr_expect_eq(ocb_quant_id_parse_name("quant_acc_check", &id), OCB_EFORMAT);
	cr_expect_eq(ocb_quant_id_parse_name("train_mlp", &id), OCB_EFORMAT);
}
