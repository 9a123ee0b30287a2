"""Memory-method plugins. Each YAML in conf/method names its class with `_target_`."""
