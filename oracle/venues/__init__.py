"""The venue kinds the daemon answers on, one package each (docs/venues.md, "Adding a venue")."""
