"""The one place the package version is written down."""

VERSION = "0.1.0"
NAME = "lean-beam"
