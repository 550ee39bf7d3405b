"""Domain `publish`: approved cards become canonical pages; index pages; the janitor of the review queue."""

GROUP = "publish"
