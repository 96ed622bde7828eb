"""Karmada's control plane as fleetrules models it, one module per part: the flags and feature gates the
components run with (gates), the settings file that declares them once (config), and the notes every verb says
about them (notes).
"""
