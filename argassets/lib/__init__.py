"""The science: plain, typed functions that import nothing from Dagster."""
