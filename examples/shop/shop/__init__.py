"""The example shop service."""
