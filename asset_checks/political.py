"""Asset checks: political."""
