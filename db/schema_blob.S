/* Embeds db/schema.sql as a NUL-terminated string `ocb_schema_sql`. */
	.section .rodata
	.global ocb_schema_sql
	.type ocb_schema_sql, @object
ocb_schema_sql:
	.incbin "db/schema.sql"
	.byte 0
	.size ocb_schema_sql, . - ocb_schema_sql
	.section .note.GNU-stack,"",@progbits
