"""Asset checks, beside the stage they check."""
