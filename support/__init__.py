"""Helpers shared by the tests, the screenshots and the benchmarks: a browser driving the app, and a
made-up corpus for tiny models. Not part of the installed package."""
