"""The browser tests drive the app: on a machine without its packages they skip."""

from tests.conftest import skip_without_app

skip_without_app()
