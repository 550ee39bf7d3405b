"""The nightly dream's rules (seed S4): the gate, knowledge lint by layer, the interest profile and the
digest. Pure functions over plain rows; the assets in `hippo_assets/dream/` feed them and write results."""
