"""Passages an earlier model embedded: a partial index on them and the beat's function that finds their end
users (memory/read/reembed.py), across end users as the other functions of 0008 do: ids only."""

from django.db import migrations, models

# plpgsql with the model as a literal in the query it runs, so that the planner can use the partial index
# (a SECURITY DEFINER function's parameter would reach it as an unknown value).
STALE_VECTORS = """
CREATE FUNCTION twin_stale_vectors(current_model text, max_end_users integer)
RETURNS TABLE (end_user_id bigint)
LANGUAGE plpgsql STABLE SECURITY DEFINER SET search_path = pg_catalog, public, pg_temp AS $$
BEGIN
    RETURN QUERY EXECUTE format(
        'SELECT DISTINCT p.end_user_id FROM memory_passage p WHERE p.model <> %L ORDER BY 1 LIMIT %s',
        current_model, max_end_users);
END
$$;
COMMENT ON FUNCTION twin_stale_vectors(text, integer) IS
    'The beat''s work: end users with passages another model than current_model embedded (memory.read.reembed).';
"""


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0006_project_secret_policy"),
        ("memory", "0016_half_text"),
    ]

    operations = [
        migrations.AddIndex(
            model_name="passage",
            index=models.Index(
                condition=models.Q(("model", "all-MiniLM-L6-v2-onnx-int8-dynamic"), _negated=True),
                fields=["end_user"],
                name="passage_stale_model",
            ),
        ),
        migrations.RunSQL(STALE_VECTORS, "DROP FUNCTION twin_stale_vectors(text, integer);"),
    ]
