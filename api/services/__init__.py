"""Services: what the controllers call. No HTTP types in here."""
