import pytest

from benchlib.engines import ENGINES, PK_KINDS, Credentials, EmbeddedEngine, ServerEngine, get_engine
from benchlib.engines.sql import digits_cross_join_insert
from benchlib.errors import UnknownEngineError


def test_registry_has_the_engines_of_the_first_experiments():
    assert {"postgres", "mysql", "mariadb", "sqlite", "duckdb"} <= set(ENGINES)


def test_unknown_engine_lists_known_keys():
    with pytest.raises(UnknownEngineError) as err:
        get_engine("oracle")
    message = str(err.value)
    assert "'oracle'" in message
    for key in ENGINES:
        assert key in message


@pytest.mark.parametrize("key", sorted(ENGINES))
def test_engine_declares_what_workloads_need(key):
    engine = get_engine(key)
    assert engine.key == key and engine.title and engine.version_query
    assert engine.color.startswith("#") and len(engine.color) == 7
    for kind in PK_KINDS:
        statements = engine.dml.create_statements(kind)
        assert statements[-1].startswith("create table demo (")
        assert "primary key" in statements[-1]
    assert "insert into demo" in engine.dml.generate_rows(10)
    if isinstance(engine, ServerEngine):
        assert engine.official_image.count(":") == 1
        assert engine.port > 0
        env = engine.env(Credentials("u", "pw", "db"))
        assert "pw" in env.values()  # the password reaches the official env convention
        assert engine.recipe or engine.no_recipe_reason
    else:
        assert isinstance(engine, EmbeddedEngine)


def test_engine_colors_are_distinct():
    colors = [e.color for e in ENGINES.values()]
    assert len(set(colors)) == len(colors)


def test_digits_generator_uses_enough_digits():
    assert digits_cross_join_insert(1_000_000).count(" x x") == 6
    assert digits_cross_join_insert(1_000_001).count(" x x") == 7
    assert digits_cross_join_insert(5).endswith("limit 5")


def test_credentials_repr_hides_password():
    assert "s3cret" not in repr(Credentials("root", "s3cret", "db"))
