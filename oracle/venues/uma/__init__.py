"""Kinds `uma` (UMA's OptimisticOracleV2, plain or managed) and `uma_v3` (OptimisticOracleV3).

One package for both: they share UMA's deployment (Finder, Store, whitelists, the mock
DVM that `stack` deploys), the bond account that approves a currency for one oracle, and
the way the oracle is found (a deployment file or an address); OOv3's binding and wiring
build on OOv2's. Each kind has its own settings, binding and venue modules."""
