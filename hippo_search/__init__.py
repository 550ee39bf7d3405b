"""Search as one library: the pipeline (`pipeline.py`: load → request → lanes → fusion → sections →
envelope), its request and envelope models (`envelope.py`), evidence bundles (`bundle.py`), the gap radar's
replay (`gaps.py`) and the light client `hippo search` uses to ask a running librarian (`client.py`).

Nothing is imported here, so `hippo_search.client` stays light: the CLI's fast path imports no store.
"""
