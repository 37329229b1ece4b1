"""Sensors, schedules and jobs that operate the platform."""

SENSORS: list = []
SCHEDULES: list = []
JOBS: list = []
