from .base import Engine, Server, postgres_config_command
from .clients import postgres_wire

ENGINE = Engine(
    key="postgres",
    title="PostgreSQL",
    color="#336791",
    family="postgres",
    client=postgres_wire(),
    server=Server(
        official_image="postgres:17",
        port=5432,
        env=lambda c: {"POSTGRES_PASSWORD": c.password, "POSTGRES_USER": c.user, "POSTGRES_DB": c.database},
        user="postgres",
        command=postgres_config_command,
        recipe="postgres",
    ),
)
