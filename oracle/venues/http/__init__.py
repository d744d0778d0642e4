"""Kind `http`: a venue's own API for markets and its webhook for verdicts."""
