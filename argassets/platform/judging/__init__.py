"""Judging: requests and the Judge interface, engines, the judging step and every study's judging asset."""
