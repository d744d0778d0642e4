"""LLM providers behind one small interface, through their official SDKs."""
