from planner.daemon.client import main

if __name__ == "__main__":  # a spawned portfolio pool process imports this module: it must not run the CLI
    main()
