"""Kind `reality`: questions on Reality.eth (v3, v3 with ERC-20 bonds, v2.1)."""
