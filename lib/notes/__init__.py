"""The kb engine (spec 002): notes and uploaded files, tagged into collections, searched by meaning and words."""
