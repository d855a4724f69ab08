"""The planner's persistent stores, one module each; every store of the product is listed in README.md."""
