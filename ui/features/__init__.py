"""The Features screen: a sparse dictionary of one residual site trained on demand, the table of its features, a page
per feature (what it reads, what it does to the forecast, who writes it) and a search by concept."""
