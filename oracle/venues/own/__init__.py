"""Kind `chain`: our own oracle contract (AgentOracle), its question scanner and submitter."""
