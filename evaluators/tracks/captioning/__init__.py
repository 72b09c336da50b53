"""``captioning``: the captioning track's package (molecule → text description on ChEBI-20, issue 34).

Metrics first: :mod:`evaluators.tracks.captioning.metrics` scores captions against gold descriptions as the
MolT5 authors' evaluation script does. No track is registered here yet.
"""
