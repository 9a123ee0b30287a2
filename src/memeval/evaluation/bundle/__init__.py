"""Result bundles' file formats: the manifest (sha256 of every file, the calls file, secret scan)
and the generated README. The commands that make and check bundles replay runs through the
harness, so they live above it, in cli/bundle/ (`memeval bundle export|verify|import`; format in
docs/RESULT_BUNDLES.md).
"""
