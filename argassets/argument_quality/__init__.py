"""Study A, argument quality on Webis-ArgQuality-20: its science (plain functions) and its assets."""
