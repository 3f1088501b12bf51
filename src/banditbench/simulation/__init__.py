"""The simulation core: the one loop and its seeding (runner), delay models (delays), feedback items."""
