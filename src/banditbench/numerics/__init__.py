"""Numerical pieces shared by environments, policies and oracles: the logistic link, the logistic MLE."""
