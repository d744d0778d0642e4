"""The chain layer: RPC pool, key custody, transaction manager, market source, submitters.

Nothing is imported here so that `oracle config check` does not pay for web3; import the
modules directly:

    oracle.chain.settings    ChainSettings, the `chain:` configuration section
    oracle.chain.fees        pure EIP-1559 fee choice, replacement bumps, gas limits
    oracle.chain.nonces      pure nonce planning
    oracle.chain.keys        Signer protocol, LocalSigner, encrypted keystores
    oracle.chain.rpc         RpcPool: several RPC URLs, health, lag, failover
    oracle.chain.intents     Intent, IntentStore protocol, in-memory and file stores
    oracle.chain.revert      custom-error decoding from any ABI
    oracle.chain.txmanager   TxManager: record, send, replace, confirm, reconcile
    oracle.chain.observer    ChainObserver: what the pool and the manager report (metrics)
"""
