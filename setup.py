"""Build the optional compiled hot paths; without a C compiler the package runs on their Python twins."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "streameval._speedups",
            sources=["streameval/_speedups.c"],
            optional=True,  # a failed build leaves the pure Python/numpy package, with identical results
        )
    ]
)
