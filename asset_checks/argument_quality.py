"""Asset checks: argument_quality."""
