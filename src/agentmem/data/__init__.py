"""Data files shipped with agentmem (the sample conversation used by ``agentmem demo``)."""
