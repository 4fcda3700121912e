"""Configuration: YCSB .properties files and -p overrides, presets, frozen workload specs."""
