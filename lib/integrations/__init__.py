"""What agents reach the governance corpus through, over the one retrieval function
(``lib.governance.search.query_governance``): the query log every interface writes, the citation text,
the LangChain retriever and tool, and OpenAI strict function schemas made from the MCP tools' schemas."""
