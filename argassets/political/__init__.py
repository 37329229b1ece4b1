"""Study B, political positions on QT30: its knowledge base, science (plain functions) and assets."""
