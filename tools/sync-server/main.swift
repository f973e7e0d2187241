print("sync-server: not wired yet")
