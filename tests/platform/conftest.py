"""Fixtures shared by the platform tests."""

from tests.platform.test_sensors_registry import harness  # noqa: F401  (a fixture, used by test_sensors_schedule)
